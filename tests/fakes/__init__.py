"""Stand-ins for the outside systems the submitter talks to: stack outputs and `pulumi`."""
