"""The staff UI: server-rendered pages for legal staff (cases, documents, asking, history). The
pages' scripts (static/js/) call the REST API with the session, so every rule of the API (roles,
tenant scoping, errors, throttling) holds in the browser too."""
