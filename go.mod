module github.com/agentry/agentry

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0
	github.com/willabides/kongplete v0.4.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/posener/complete v1.2.3 // indirect
	github.com/riywo/loginshell v0.0.0-20200815045211-7d26008be1ab // indirect
)
