// The live stream (GET /_sim/stream): server-sent events carrying the same JSON the /_sim API
// returns. Views subscribe by event name; the browser reconnects by itself.

const listeners = new Map();
let source = null;

export function on(name, listener) {
  if (!listeners.has(name)) listeners.set(name, new Set());
  listeners.get(name).add(listener);
  if (source) source.addEventListener(name, relay);
}

function relay(event) {
  let payload = null;
  try {
    payload = JSON.parse(event.data);
  } catch {
    return;
  }
  for (const listener of listeners.get(event.type) || []) listener(payload);
}

export function start(status) {
  source = new EventSource("/_sim/stream");
  for (const name of listeners.keys()) source.addEventListener(name, relay);
  source.addEventListener("hello", () => status(true));
  source.addEventListener("error", () => status(false));
}
