"""The gate every request passes: API keys (auth.py), per-client limits (admission.py), body limits
(body_limits.py) and usage metering (usage.py)."""
