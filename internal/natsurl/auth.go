package natsurl

import "github.com/nats-io/nats.go"

// Auth is how a binary signs in to NATS and checks its server, as its
// flags or config file give it; an empty field adds nothing.
type Auth struct {
	Creds       string // a .creds file (JWT and nkey seed)
	NKeySeed    string // a file holding an nkey seed
	Token       string
	User        string
	Password    string // with User
	CA          string // a PEM file of the CAs that sign the server's certificate
	Cert, Key   string // the client TLS certificate and its key, PEM files
	InboxPrefix string // the prefix of the connection's reply subjects
}

// Options returns the nats.go options of a: credentials, token, user and
// password, the server's CAs, the client certificate and the inbox prefix.
// Its one error is an nkey seed file that does not read; the caller names the
// flag or setting that gave it.
func (a Auth) Options() ([]nats.Option, error) {
	var opts []nats.Option
	if a.Creds != "" {
		opts = append(opts, nats.UserCredentials(a.Creds))
	}
	if a.NKeySeed != "" {
		o, err := nats.NkeyOptionFromSeed(a.NKeySeed)
		if err != nil {
			return nil, err
		}
		opts = append(opts, o)
	}
	if a.Token != "" {
		opts = append(opts, nats.Token(a.Token))
	}
	if a.User != "" {
		opts = append(opts, nats.UserInfo(a.User, a.Password))
	}
	if a.CA != "" {
		opts = append(opts, nats.RootCAs(a.CA))
	}
	if a.Cert != "" {
		opts = append(opts, nats.ClientCert(a.Cert, a.Key))
	}
	if a.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(a.InboxPrefix))
	}
	return opts, nil
}
