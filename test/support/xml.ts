// A small strict XML reader for checking JUnit reports: it throws on anything not well-formed
// (unclosed or crossed tags, a bare < or &, an unknown entity, a duplicate attribute, characters
// XML forbids, text outside the root) and returns the element tree.

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = '[A-Za-z_][A-Za-z0-9._:-]*';
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(text: string, at: number): string {
  if (/[<]/.test(text)) throw new Error(`a bare < at ${at}`);
  if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/.test(text)) throw new Error(`a character XML forbids at ${at}`);
  return text.replace(/&([^;\s]*);?/g, (whole, name: string) => {
    if (!whole.endsWith(';')) throw new Error(`a bare & at ${at}`);
    if (name in ENTITIES) return ENTITIES[name]!;
    const numeric = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(name);
    if (numeric) return String.fromCodePoint(numeric[1]!.startsWith('x') ? parseInt(numeric[1]!.slice(1), 16) : Number(numeric[1]));
    throw new Error(`an unknown entity &${name}; at ${at}`);
  });
}

export function parseXml(source: string): XmlElement {
  let i = 0;
  const declaration = /^<\?xml[^?]*\?>\s*/.exec(source);
  if (declaration) i = declaration[0].length;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  const tag = new RegExp(`<(/?)(${NAME})((?:\\s+${NAME}\\s*=\\s*"[^"]*")*)\\s*(/?)>`, 'y');
  while (i < source.length) {
    const lt = source.indexOf('<', i);
    const text = source.slice(i, lt === -1 ? source.length : lt);
    if (stack.length) stack.at(-1)!.text += decode(text, i);
    else if (text.trim()) throw new Error(`text outside the root element at ${i}`);
    if (lt === -1) break;
    tag.lastIndex = lt;
    const m = tag.exec(source);
    if (!m) throw new Error(`a malformed tag at ${lt}: ${source.slice(lt, lt + 40)}`);
    const [whole, closing, name, attributeText, selfClosing] = m;
    i = lt + whole.length;
    if (closing) {
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`</${name}> at ${lt} closes ${open ? `<${open.name}>` : 'nothing'}`);
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const a of attributeText!.matchAll(new RegExp(`(${NAME})\\s*=\\s*"([^"]*)"`, 'g'))) {
      if (a[1]! in attributes) throw new Error(`attribute ${a[1]} twice on <${name}> at ${lt}`);
      attributes[a[1]!] = decode(a[2]!, lt);
    }
    const element: XmlElement = { name: name!, attributes, children: [], text: '' };
    if (stack.length) stack.at(-1)!.children.push(element);
    else if (root) throw new Error(`a second root element <${name}> at ${lt}`);
    else root = element;
    if (!selfClosing) stack.push(element);
  }
  if (stack.length) throw new Error(`<${stack.at(-1)!.name}> is never closed`);
  if (!root) throw new Error('no root element');
  return root;
}
