// Shared helpers of the staff UI. Pages call the REST API with the session cookie and the CSRF
// token; every text from the server goes into the page through textContent, never innerHTML.
"use strict";

const Lexrag = {
  csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  },

  // fetch() a JSON API; resolves to {ok, status, body, retryAfter} (retryAfter: the seconds a 429
  // says to wait, else null). Network failures become an error body.
  async api(url, { method = "GET", body = null, headers = {} } = {}) {
    const init = { method, headers: { Accept: "application/json", ...headers }, credentials: "same-origin" };
    if (method !== "GET") init.headers["X-CSRFToken"] = Lexrag.csrfToken();
    if (body !== null && !(body instanceof FormData)) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    } else if (body !== null) {
      init.body = body;
    }
    try {
      const response = await fetch(url, init);
      const text = await response.text();
      let parsed = null;
      try { parsed = text ? JSON.parse(text) : null; } catch (_) { parsed = null; }
      return { ok: response.ok, status: response.status, body: parsed, retryAfter: Lexrag.retryAfter(response.headers.get("Retry-After")) };
    } catch (error) {
      return { ok: false, status: 0, body: { error_type: "NetworkError", message: "The server could not be reached. Check your connection and try again." }, retryAfter: null };
    }
  },

  // The plain-words message of an API error body, with the per-file or per-field details.
  errorText(result) {
    const body = result.body || {};
    let text = body.message || `The request failed (HTTP ${result.status}).`;
    const files = body.details && body.details.files;
    if (Array.isArray(files)) {
      // Only what the message does not already say (a summary often names every file's reason).
      const more = files.filter((f) => f.message && !text.includes(f.message));
      if (more.length) text += " " + more.map((f) => `${f.filename}: ${f.message}`).join(" ");
    }
    return text;
  },

  // A Retry-After header's seconds (the server sends a number of seconds), else null.
  retryAfter(header) {
    const seconds = header === null || header === "" ? NaN : Number(header);
    return Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
  },

  el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  },

  sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); },
};

// A <select data-autosubmit> submits its form on change (the tenant switcher).
document.addEventListener("change", (event) => {
  if (event.target.matches("select[data-autosubmit]")) event.target.form.requestSubmit();
});
