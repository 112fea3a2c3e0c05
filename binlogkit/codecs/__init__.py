"""Construct declarations of every event layout, one small module per event family."""
