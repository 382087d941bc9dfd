"""Firecrawl's API, v2 and v1: each endpoint's wire format (*_wire.py) and routes (*_routes.py), and its error
envelope (envelope.py)."""
