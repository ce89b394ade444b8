"""Built-in components, registered through the same hooks as any plugin."""
