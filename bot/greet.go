package bot

import "agentbot/bot/greeting"

// isGreetingOnly reports whether text only greets (greeting.Only).
var isGreetingOnly = greeting.Only
