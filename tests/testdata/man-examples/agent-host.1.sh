# agent-host.1's examples: the requests of one turn.
{
	ndjson make type=hello id=h1 protocol:=1
	ndjson make type=run_turn id=t1 runId=r1 params.chatId=c1 params.prompt='hello there'
} > requests.ndjson
