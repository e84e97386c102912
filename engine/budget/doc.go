// Package budget is a token cap (Budget) and the error of a turn refused
// at one (BudgetError), as the engine enforces them and front ends show
// them.
package budget
