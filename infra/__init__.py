"""accelstack's Pulumi program, in layers that import downwards only.

contract (what a stack exports; the submitter reads it) and catalog (accelerator facts) at the
bottom; config (the typed stack config) reads the catalog; specs (pure desired state) read the
config; components (Pulumi resources) declare the specs; program.py wires them into a stack;
preview (the offline harness) and policy (platform rules, CrossGuard pack) run the program.

May import: infra
Must not import: submit
"""
