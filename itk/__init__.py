"""An agent for the A2A integration test kit (a2aproject/a2a-itk): agent.py."""
