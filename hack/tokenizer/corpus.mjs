// The adversarial corpus for golden ids. Deterministic.

// Characters whose handling differs between the JavaScript reference and the
// Rust tokenizers crate in GPT-2's built-in ByteLevel regex (JS \s includes
// U+FEFF and excludes U+0085; Oniguruma's is the White_Space property).
export const jsWhitespaceQuirks = ["\u0085", "\ufeff"];

export function corpus({ specials = [], byteLevelRegex = false } = {}) {
  const c = [
    "",
    "Hello world",
    "Hello, world! How are you?",
    " Hello  world ",
    "  leading spaces",
    "trailing spaces   ",
    "a  b   c    d     e",
    "\tindented\t\ttext\t",
    "col1\tcol2\tcol3\n1\t2\t3\n",
    "line1\nline2\n\nline4\n\n\n",
    "\n",
    "\n\n  \n",
    "   \n   x",
    "x \n y \n\n z",
    "Windows\r\nline\r\n\r\nend\r\n",
    "\r",
    "a\r\rb\r\n\r\n",
    " \t \n \t ",
    // digits and numbers
    "1", "12", "123", "1234", "12345", "12345678901234567890",
    "3.14159265358979", "1,000,000.00", "2024-01-15T10:30:00Z", "phone: +1 (555) 123-4567",
    "v1.2.3-rc.4", "0x1F600 0b1010 1e-9", "٣٤٥ ١٢", "①②③ Ⅻ x²+y³=z¹", "０１２３４５",
    // contractions
    "I'm you're he's they've we'll I'd can't won't",
    "I'M YOU'RE HE'S THEY'VE WE'LL I'D",
    "'s 't 're 've 'm 'll 'd",
    "rock'n'roll ''s it's' 'sa 'tis",
    "don\u2019t curly\u2019s quotes",
    // CJK and other scripts
    "你好，世界！", "日本語のテキストです。カタカナとひらがな。", "한국어 텍스트입니다", "中文 English 混合 text 123",
    "汉字汉字汉字汉字汉字汉字汉字汉字", "Русский текст, ёЁ", "Ελληνικά κείμενα", "עברית טקסט", "النص العربي",
    "हिन्दी पाठ", "ภาษาไทย", "Tiếng Việt có dấu", "Ǆǅǆ ǈ ß ẞ İı",
    // emoji
    "😀", "👍🏽 thumbs", "👨‍👩‍👧‍👦 family", "🏳️‍🌈", "❤️ love", "🇺🇸🇯🇵", "emoji😀in😀text", "🤖🤖🤖🤖",
    // combining marks, NFC vs NFD input, compatibility characters
    "caf\u00e9 vs cafe\u0301", "A\u030angstro\u0308m", "\u212b \u00c5 A\u030a", "Z\u0324\u0354\u0367\u0311a\u0308\u0356lgo",
    "\ufb01 ligature \ufb02", "\u1100\u1161\u11a8 jamo", "\u0915\u094d\u0937", "e\u0301\u0301\u0301",
    // exotic whitespace and invisible characters
    "\u00a0nbsp\u00a0", "\u3000ideographic\u3000space", "a\u2003b\u2009c", "zero\u200bwidth\u200djoiner",
    "\u000b\u000c form feed", "\u2028line sep\u2029para",
    // code
    "function add(a, b) {\n  return a + b;\n}\n",
    "def f(x):\n    if x > 0:\n        return x ** 2\n    return None\n",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}",
    "<div class=\"x\"><p>Hello &amp; bye</p></div>",
    "for i in $(seq 1 10); do echo \"$i\"; done | grep -v 5 >> out.txt 2>&1",
    "func main() {\n\tfmt.Println(\"hi\")\n\tif err != nil {\n\t\treturn\n\t}\n}\n",
    "SELECT * FROM users WHERE id = 42 AND name LIKE '%bob%';",
    "#include <stdio.h>\nint main(void){printf(\"%d\\n\",1<<3);}",
    "https://example.com/path?query=1&x=y#frag",
    // punctuation
    "...", "!!!???", "-- --- ----", "\u00abquotes\u00bb \u201csmart\u201d", "a.b,c;d:e!f?g", "(((nested)))", "$$$ %%% ^^^",
    // long inputs
    "a".repeat(1000),
    "abc".repeat(400),
    "supercalifragilisticexpialidocious".repeat(20),
    "9".repeat(500),
    " ".repeat(300) + "x",
    "\n".repeat(100),
    "!".repeat(200),
    "ab1".repeat(300),
    "The quick brown fox jumps over the lazy dog. ".repeat(30),
    "\u4e00\u4e8c\u4e09\u56db\u4e94".repeat(100),
    "😀".repeat(100),
  ];
  // mixed, pseudo-random text from a fixed generator
  let seed = 12345;
  const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  const alphabet = ["a", "b", "Z", " ", "  ", "\n", "\t", "1", "23", "'s", "'", ".", ",", "é", "e\u0301", "中", "文", "😀", "👍🏽", "\u00a0", "-", "_", "\r\n", "?!", "ß", "ﬁ", "\u0300", "Ω", "ї"];
  for (let k = 0; k < 20; k++) {
    let s = "";
    const n = 5 + rnd(40);
    for (let i = 0; i < n; i++) s += alphabet[rnd(alphabet.length)];
    c.push(s);
  }
  if (!byteLevelRegex) {
    for (const q of jsWhitespaceQuirks) c.push(`a${q}b ${q} ${q}${q}x`);
  }
  // special tokens embedded in text
  for (const s of specials.slice(0, 4)) {
    c.push(s, `${s}${s}`, `Hello${s}world`, `Hello ${s} world`, ` ${s} `, `${s}\n${s}\n`, s.slice(0, -1), s.toLowerCase() + "x", `${s.slice(0, 3)} ${s.slice(3)}`);
  }
  if (specials.length >= 2) {
    const [a, b] = specials;
    c.push(`${a}system\nYou are helpful.${b}\n${a}user\nHi there!${b}\n${a}assistant\n`);
  }
  return c;
}
