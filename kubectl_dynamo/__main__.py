from kubectl_dynamo.cli import run

run()
