from bench.latency.cli import main

main()
