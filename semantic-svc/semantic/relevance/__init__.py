"""Relevance calibration: a monotone map from each scoring model's raw score to a probability of relevance."""
