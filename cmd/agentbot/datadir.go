package main

import (
	"log/slog"
	"os"
	"path/filepath"

	"agentbot/storage/bolt"
)

// legacyDataDir is the data folder agentbot used by default before the
// user's state folder: ./data of the working directory. Run from a
// project's repository it sat inside the BMAD root, beside the files the
// agents read.
const legacyDataDir = "./data"

// stateDataDir is the default data folder: agentbot in the user's state
// folder, $XDG_STATE_HOME/agentbot, else ~/.local/state/agentbot ("" when
// getenv knows neither; XDG_STATE_HOME counts only when absolute, as the
// XDG spec asks).
func stateDataDir(getenv func(string) string) string {
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "agentbot")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "agentbot")
	}
	return ""
}

// defaultDataDir is the data folder when neither --data nor AGENTBOT_DATA
// names one: ./data when it holds a bbolt store already (legacy is then
// set: the folder keeps working, and the start logs how to move it), else
// the user's state folder, else, with no home folder known, ./data.
func defaultDataDir(getenv func(string) string) (dir string, legacy bool) {
	if fi, err := os.Stat(filepath.Join(legacyDataDir, bolt.DBName)); err == nil && fi.Mode().IsRegular() {
		return legacyDataDir, true
	}
	if d := stateDataDir(getenv); d != "" {
		return d, false
	}
	return legacyDataDir, false
}

// warnLegacyData logs, at start, that the data folder is the working
// directory's ./data kept for its store, and how to move it.
func warnLegacyData(log *slog.Logger, cfg *Config, getenv func(string) string) {
	if !cfg.LegacyData {
		return
	}
	here, _ := filepath.Abs(cfg.DataDir)
	to := stateDataDir(getenv)
	if to == "" {
		to = "a folder outside your project"
	}
	log.Warn("the data folder is ./data of the working directory, kept because it holds agentbot's store and AGENTBOT_DATA is unset; "+
		"agents must not see it from a project folder: stop agentbot and move it to the default (mv ./data "+to+"), "+
		"or set AGENTBOT_DATA to the folder you want", "data", here, "default", to)
}
