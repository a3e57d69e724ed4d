"""Experiments: a sweep of trials, each one JobSet, recorded in the cluster as one object."""
