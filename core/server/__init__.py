"""livefill's embedded HTTP server: the demo provider (and the relay, core/server/relay_app.py).

    app.py            build_app(relay_token=..., defaults=...) / create_app(): the Starlette app
    runner.py         EmbeddedServer: uvicorn on 127.0.0.1 in a background thread with its own loop
    cli.py            the `livefill-server` console script
    guard.py          Guard: the middleware every app is served behind (Host, Origin, JSON
                      content type, body size and time caps; refusals logged once per interval)
    connection.py     per connection: request-head deadline, TCP_NODELAY; quiet client goodbyes;
                      prewarm of what a first relay request imports
    demo_provider.py  the routes: /v1/messages, /v1/chat/completions, /v1/responses, /api/chat,
                      /api/generate, /raw/v1/extract, /_demo/scenarios, /_demo/requests
    knobs.py          DemoDefaults, and the knobs in force for one request (the x-demo-* headers
                      themselves are core/demo_protocol.py, shared with the clients)
    generation.py     token-like cutting of a scenario's output (deterministic per seed)
    faults.py         plan + wire -> the steps of one response, faults included
    wires/            one module per wire: the exact frames (sans-IO)
    streaming.py      executing the steps: timing, slicing, pings, cancel detection
    replay.py         answering a request with a recorded trace (x-demo-replay), byte for byte
    request_log.py    the request log
"""
