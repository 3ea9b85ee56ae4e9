package redact_test

import (
	"fmt"

	"github.com/medallionhq/medallion/internal/redact"
)

func ExampleString() {
	fmt.Println(redact.String("export API_TOKEN=h7Dk2pQ9zX4mR8vB && make deploy"))
	fmt.Println(redact.String("git clone https://deploy:Zq8mP2vL9xW4@git.example.com/acme/app.git"))
	fmt.Println(redact.String(`{"usage":{"input_tokens":1834},"password":"<redacted>"}`))
	// Output:
	// export API_TOKEN=[REDACTED:secret-assignment] && make deploy
	// git clone https://deploy:[REDACTED:url-password]@git.example.com/acme/app.git
	// {"usage":{"input_tokens":1834},"password":"<redacted>"}
}

func ExampleRedactor_Redact() {
	r, err := redact.New(redact.Options{
		Patterns: []redact.Pattern{{Kind: "acme-key", Regexp: `acme_[a-z0-9]{8}`}},
	})
	if err != nil {
		panic(err)
	}
	out, n := r.Redact("ACME_KEY is acme_ab12cd34; AWS key AKIA" + "IOSFODNN7EXAMPLE")
	fmt.Println(out)
	fmt.Println(n, r.Count())
	// Output:
	// ACME_KEY is [REDACTED:acme-key]; AWS key [REDACTED:aws-access-key]
	// 2 2
}
