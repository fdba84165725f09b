// The live stream (GET /_sim/stream): server-sent events carrying the same JSON the /_sim API
// returns. Views subscribe by event name; the browser reconnects by itself after a dropped
// connection (the server then sends `state`: every view reads again), and this module opens a
// new stream when the browser gives up (a refusal: too many readers, 429).

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

const REOPEN_MS = 5000; // the server's Retry-After when it has too many readers

export function start(status) {
  source = new EventSource("/_sim/stream");
  for (const name of listeners.keys()) source.addEventListener(name, relay);
  source.addEventListener("hello", () => status(true));
  source.addEventListener("error", () => {
    status(false);
    if (source.readyState === EventSource.CLOSED) {
      // Opened anew, the stream starts without Last-Event-ID: read everything on its hello.
      setTimeout(() => {
        start(status);
        source.addEventListener("hello", () => relay(new MessageEvent("state", { data: "{}" })), {
          once: true,
        });
      }, REOPEN_MS);
    }
  });
}
