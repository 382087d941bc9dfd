"""Extract jobs (/v2/extract): one extraction run (run.py) and which store keeps the jobs (jobs.py)."""
