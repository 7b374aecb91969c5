"""The tab views of the main screen: pairs, history, explain, diff, registry, queues and the plan tray."""
