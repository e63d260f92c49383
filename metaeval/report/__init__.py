"""Rendering results for people (tables) and machines (stable JSON). Only renders."""
