"""The web front end: `consulta serve APP` — the app's page at /, a JSON API (OpenAPI at /docs and /openapi.json),
the runs' events as server-sent events, and sessions that keep each browser's or client's runs and asks its own.

`create_app(...)` builds the FastAPI app (for tests and benchmarks, or any ASGI server); `serve(...)` runs it under
uvicorn; `WebServer` is the uvicorn server that ends event streams on shutdown.
"""

from ._app import WebServer, create_app, serve

__all__ = ["WebServer", "create_app", "serve"]
