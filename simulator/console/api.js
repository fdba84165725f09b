// The /_sim API, as curl and the tests read it. The console's own reads carry a header so the
// request journal does not fill with them; its actions (POST, PATCH, DELETE) are journaled.

const READ = { "X-Rfqsim-Console": "1", Accept: "application/json" };

export class ApiError extends Error {
  constructor(status, body) {
    const error = body && body.error;
    super(error && error.message ? `${status} ${error.code}: ${error.message}` : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function answer(response) {
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body && typeof body === "object" && "data" in body ? body.data : body;
}

export async function get(path, query = {}) {
  const url = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
  }
  return answer(await fetch(url, { headers: READ }));
}

export async function send(method, path, body) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return answer(await fetch(new URL(path, window.location.origin), init));
}
