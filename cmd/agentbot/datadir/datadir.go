// Package datadir says where agentbot keeps its data (the store and the
// sessions' folders) when neither --data nor AGENTBOT_DATA names a folder:
// the user's state folder, or ./data where an older agentbot left its
// store.
package datadir

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

// Default is the data folder when neither --data nor AGENTBOT_DATA
// names one: ./data when it holds a bbolt store already (legacy is then
// set: the folder keeps working, and the start logs how to move it), else
// the user's state folder, else, with no home folder known, ./data.
func Default(getenv func(string) string) (dir string, legacy bool) {
	if fi, err := os.Stat(filepath.Join(legacyDataDir, bolt.DBName)); err == nil && fi.Mode().IsRegular() {
		return legacyDataDir, true
	}
	if d := stateDataDir(getenv); d != "" {
		return d, false
	}
	return legacyDataDir, false
}

// WarnLegacy logs, at start, that the data folder dir is the working
// directory's ./data kept for its store (legacy, as Default said), and how
// to move it; it logs nothing when legacy is false.
func WarnLegacy(log *slog.Logger, dir string, legacy bool, getenv func(string) string) {
	if !legacy {
		return
	}
	here, _ := filepath.Abs(dir)
	to := stateDataDir(getenv)
	if to == "" {
		to = "a folder outside your project"
	}
	log.Warn("the data folder is ./data of the working directory, kept because it holds agentbot's store and AGENTBOT_DATA is unset; "+
		"agents must not see it from a project folder: stop agentbot and move it to the default (mv ./data "+to+"), "+
		"or set AGENTBOT_DATA to the folder you want", "data", here, "default", to)
}
