// Command agentbot runs agent bundles as conversations in Slack threads.
package main

func main() {}
