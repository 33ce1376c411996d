"""Extraction: stream events turned into values and the form that shows them.

The JSON prefix parser, JSON Pointers, schemas (bundled and a person's own), the readers (one
per mode), the form model, the bundled scenarios and the user's document.
"""
