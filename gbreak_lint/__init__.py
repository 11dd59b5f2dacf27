"""gbreak-lint: predict torch.compile graph breaks and skipped frames without running the model."""
__version__ = "0.1.0"
