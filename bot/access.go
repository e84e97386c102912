package bot

import "slices"

// denied says why a user may not use the bot in a channel, or "" when they
// may. The channel allowlist does not apply to direct messages.
func (b *Bot) denied(user, channel string, dm bool) string {
	if len(b.cfg.AllowedUsers) > 0 && !slices.Contains(b.cfg.AllowedUsers, user) {
		return "Sorry, agentbot is limited to certain people in this workspace, and you're not on the list (AGENTBOT_ALLOWED_USERS). Ask the person who runs agentbot to add you."
	}
	if !dm && len(b.cfg.AllowedChannels) > 0 && !slices.Contains(b.cfg.AllowedChannels, channel) {
		return "Sorry, agentbot isn't enabled in this channel (AGENTBOT_ALLOWED_CHANNELS). Try a channel where it is, or a direct message."
	}
	return ""
}
