// Building the page without markup from data: every text goes through textContent (h() and
// text()), attribute values through setAttribute; no innerHTML anywhere in the console.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      node.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(node.dataset, value);
    } else {
      node.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

const SVG = "http://www.w3.org/2000/svg";

export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function ms(value) {
  if (value === null || value === undefined) return "—";
  return value >= 100 ? `${Math.round(value)} ms` : `${Number(value).toFixed(1)} ms`;
}

export function time(iso) {
  if (!iso) return "—";
  return iso.replace("T", " ").replace("Z", "");
}

export function short(text, keep = 10) {
  if (typeof text !== "string" || text.length <= keep + 4) return text ?? "—";
  return `${text.slice(0, keep)}…`;
}

export function field(label, input) {
  // A labelled control: the label's text is the control's accessible name.
  const id = `f-${Math.random().toString(36).slice(2, 10)}`;
  input.id = id;
  return h("span", { class: "field" }, h("label", { for: id }, label), input);
}

export function pretty(value) {
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2);
}

// A list with its detail in a panel beside it (a request log's side panel): the panel stays in
// view while the list scrolls under it, so a row far down opens where the reader is looking.
// Closed, the list takes the whole width.
export class Split {
  constructor(list, label) {
    this.detail = h("aside", { class: "detail", "aria-label": label, hidden: true });
    this.root = h("div", { class: "split" }, h("div", { class: "pane" }, list), this.detail);
  }

  show(closeHref, ...children) {
    replace(this.detail, h("p", { class: "close" }, h("a", { href: closeHref }, "Close")), children);
    this.detail.hidden = false;
    this.root.classList.add("open");
  }

  hide() {
    replace(this.detail);
    this.detail.hidden = true;
    this.root.classList.remove("open");
  }
}

// What a section shows when it has nothing: a sentence, never a bare heading or an empty table.
// `wrap` puts the items in their container (a list, a table body's table).
export function orElse(items, sentence, wrap = (all) => all) {
  return items.length ? wrap(items) : h("p", { class: "empty" }, sentence);
}
