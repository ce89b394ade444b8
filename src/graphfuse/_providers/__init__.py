"""Provider plumbing: remote HTTP calls, retries, provider errors, local model files."""
