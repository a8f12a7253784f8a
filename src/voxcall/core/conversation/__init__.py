"""The conversation: its items (one class per type), their order, images, and a response's output items."""
