// A strict reading of the small XML documents carriers take (no DTDs, comments or CDATA): it
// throws on anything not well-formed and returns the element tree with text and attributes
// unescaped, so tests can compare what a carrier will read with what we meant.

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescape(value: string, where: string): string {
  if (/[<]/.test(value)) throw new Error(`raw '<' in ${where}`);
  return value.replace(/&([^;]*);?/g, (whole, name: string) => {
    if (!whole.endsWith(';') || !(name in ENTITIES)) throw new Error(`bad entity ${whole} in ${where}`);
    return ENTITIES[name]!;
  });
}

export function parseXml(xml: string): XmlElement {
  const declaration = /^<\?xml version="1\.0" encoding="UTF-8"\?>\s*/.exec(xml);
  if (!declaration) throw new Error('no XML declaration');
  let at = declaration[0].length;
  const root: XmlElement = { name: '#document', attributes: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  const NAME = '[A-Za-z_][\\w.-]*';
  const tag = new RegExp(`^<(/?)(${NAME})((?:\\s+${NAME}="[^"<]*")*)\\s*(/?)>`);
  while (at < xml.length) {
    const next = xml.indexOf('<', at);
    const text = xml.slice(at, next === -1 ? xml.length : next);
    if (text.length > 0) stack.at(-1)!.text += unescape(text, `text of <${stack.at(-1)!.name}>`);
    if (next === -1) break;
    const match = tag.exec(xml.slice(next));
    if (!match) throw new Error(`malformed tag at ${next}: ${xml.slice(next, next + 40)}`);
    const [whole, closing, name, attributeText, selfClosing] = match as unknown as [string, string, string, string, string];
    if (closing) {
      if (stack.length === 1 || stack.at(-1)!.name !== name) throw new Error(`</${name}> closes <${stack.at(-1)!.name}>`);
      stack.pop();
    } else {
      const element: XmlElement = { name, attributes: {}, children: [], text: '' };
      for (const attribute of attributeText.matchAll(new RegExp(`(${NAME})="([^"]*)"`, 'g'))) {
        if (attribute[1]! in element.attributes) throw new Error(`duplicate attribute ${attribute[1]}`);
        element.attributes[attribute[1]!] = unescape(attribute[2]!, `${name}@${attribute[1]}`);
      }
      if (stack.length === 1 && root.children.length > 0) throw new Error('more than one root element');
      stack.at(-1)!.children.push(element);
      if (!selfClosing) stack.push(element);
    }
    at = next + whole.length;
  }
  if (stack.length !== 1) throw new Error(`<${stack.at(-1)!.name}> is never closed`);
  if (root.children.length !== 1 || root.text.trim() !== '') throw new Error('not exactly one root element');
  return root.children[0]!;
}

export function find(element: XmlElement, name: string): XmlElement | undefined {
  if (element.name === name) return element;
  for (const child of element.children) {
    const found = find(child, name);
    if (found) return found;
  }
  return undefined;
}
