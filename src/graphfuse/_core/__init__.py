"""The core every layer stands on: errors, types, protocols, filters, text and time."""
