"""An offline stand-in for the web: Debian documentation served on loopback, a thin search engine over it,
and a real searx in front of that engine."""
