"""HTTP serving of a trained model (optional extra: pip install 'nmt[serve]')."""

from nmt.serve.app import ServeLimits, create_app, serve

__all__ = ["ServeLimits", "create_app", "serve"]
