// The page's calls to the JSON API (the session cookie rides along) and its event streams.

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : String(status));
    this.status = status;
    this.code = body && body.error_code ? body.error_code : "network";
    this.body = body || {};
  }
}

export async function api(method, path, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, null);
  }
  const data = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
  if (!response.ok) {
    throw new ApiError(response.status, data);
  }
  return data;
}

// Follow a run's events. EventSource reconnects by itself, sending Last-Event-ID, and the server replays what was
// missed; `seq` guards against anything seen twice all the same. `done` resolves when the stream ends (the run
// ended, or `live` is false and the replay is over) or is closed.
export function follow(runId, { onEvent, onReset, onLive, onLost, live = true }) {
  let finish;
  const done = new Promise((resolve) => {
    finish = resolve;
  });
  let last = 0;
  const source = new EventSource(`/api/runs/${encodeURIComponent(runId)}/events?follow=${live}`);
  const close = () => {
    source.close();
    finish(last);
  };
  source.onmessage = (message) => {
    const event = JSON.parse(message.data);
    if (event.type === "text_delta") {
      onEvent(event); // a draft of the reply being written: not numbered, never replayed
      return;
    }
    if (event.seq <= last) {
      return;
    }
    last = event.seq;
    onEvent(event);
  };
  source.addEventListener("reset", () => {
    last = 0;
    onReset?.();
  });
  source.addEventListener("live", () => onLive?.());
  source.addEventListener("end", close);
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) {
      onLost?.();
      close();
    }
  };
  return { done, close };
}
