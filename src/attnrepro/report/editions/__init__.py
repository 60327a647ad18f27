"""The annotated editions of the articles."""
