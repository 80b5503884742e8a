"""What the harness observes about the machine and the processes it runs."""
