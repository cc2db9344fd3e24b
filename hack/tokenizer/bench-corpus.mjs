// Writes a deterministic, realistic benchmark corpus (mixed English prose,
// source code, CJK text and numbers; about SIZE bytes, default 4 MiB) to
// stdout. Documents are separated by a line "\f".
//   node bench-corpus.mjs [SIZE] > corpus.txt
const size = Number(process.argv[2] || 4 << 20);
let seed = 42;
const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), Math.floor((seed / 2147483648) * n));
const pick = (a) => a[rnd(a.length)];
const words = ("the of and to in a is that for it as was with be by on not he I this are or his from at which but have an they you were " +
  "her she there their one all we can has more its would been if will who about up out them so when what some time could into " +
  "model token tokenizer router cache block hash worker request latency throughput prefix kubernetes cluster deployment inference " +
  "GPU memory server client response prompt context sequence attention layer weights quantization batch scheduler metrics").split(" ");
const punct = [".", ".", ".", ",", ",", ";", ":", "!", "?"];
const cjk = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持音";
const code = [
  "func (s *Server) Handle(ctx context.Context, req *Request) (*Response, error) {\n\tif req == nil {\n\t\treturn nil, errors.New(\"nil request\")\n\t}\n\tfor i := 0; i < len(req.Items); i++ {\n\t\ts.count[req.Items[i].ID]++\n\t}\n\treturn &Response{OK: true}, nil\n}\n",
  "def route(request, workers):\n    best = None\n    for w in workers:\n        score = w.overlap(request.tokens) * 2.0 - w.load\n        if best is None or score > best[0]:\n            best = (score, w)\n    return best[1] if best else None\n",
  "const config = {\n  blockSize: 64,\n  model: \"Qwen/Qwen3-8B\",\n  workers: [\"a\", \"b\", \"c\"],\n};\nexport async function main() {\n  const res = await fetch(`/v1/chat?x=${config.blockSize}`);\n  console.log(JSON.stringify(await res.json(), null, 2));\n}\n",
  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm-worker\n  labels:\n    app: dynamo\nspec:\n  replicas: 4\n  template:\n    spec:\n      containers:\n        - name: worker\n          image: nvcr.io/nvidia/dynamo:0.4.1\n          resources:\n            limits:\n              nvidia.com/gpu: 1\n",
];
const out = [];
let total = 0;
while (total < size) {
  let doc = "";
  const kind = rnd(10);
  if (kind < 6) {
    const n = 3 + rnd(8);
    for (let p = 0; p < n; p++) {
      let sent = "";
      const m = 8 + rnd(20);
      for (let i = 0; i < m; i++) {
        let w = pick(words);
        if (i === 0) w = w[0].toUpperCase() + w.slice(1);
        if (rnd(20) === 0) w = String(rnd(100000));
        if (rnd(30) === 0) w = w + "'s";
        sent += (i ? " " : "") + w;
      }
      doc += sent + pick(punct) + (rnd(4) === 0 ? "\n\n" : " ");
    }
  } else if (kind < 8) {
    doc = pick(code).replaceAll("64", String(rnd(1000)));
  } else {
    const n = 50 + rnd(300);
    for (let i = 0; i < n; i++) doc += rnd(15) === 0 ? "，" : rnd(40) === 0 ? "。\n" : cjk[rnd(cjk.length)];
  }
  out.push(doc);
  total += Buffer.byteLength(doc) + 2;
}
process.stdout.write(out.join("\n\f\n"));
