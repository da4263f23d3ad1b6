"""``wh40k serve``: a read-only HTTP JSON API over the database and the engine, and a web page.

``answers`` holds the answers the command line and the API both give (no web framework is
imported there); ``app`` builds the FastAPI application (``create_app``); ``static/`` is the web
page (HTML and one vanilla JavaScript file, no build step).
"""

#: Answers a server keeps by default (each one small: a unit, a ruling or an attack's distributions).
DEFAULT_CACHE_SIZE = 512
