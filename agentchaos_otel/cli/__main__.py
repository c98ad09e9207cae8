from agentchaos_otel.cli.main import main

main()
