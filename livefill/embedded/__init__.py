"""The embedded server: the demo provider and the relay in one app, and the app's side of it.

    app.py      build_app(...) / create_app(): demo provider routes + relay routes behind the guard
    client.py   start the embedded server in this process and read its request log
    server_process.py, server_child.py   the app's: the same server in a process of its own (LIVEFILL_DEMO_SERVER=thread: in process)
"""
