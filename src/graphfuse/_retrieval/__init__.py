"""Retrieval: the pipeline, its result cache and passage selection."""
