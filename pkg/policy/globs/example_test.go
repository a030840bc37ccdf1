package globs_test

import (
	"fmt"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

func ExampleMatch() {
	fmt.Println(globs.Match("git diff *", "git diff --stat src/main.go"))
	fmt.Println(globs.Match("git diff *", "git diff"))
	fmt.Println(globs.Match(`npm run te\*st`, "npm run test"))
	// Output:
	// true
	// true
	// false
}
