"""What can be benchmarked: frameworks, servers and the stacks they pair into."""
