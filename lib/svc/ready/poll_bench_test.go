package ready
import ("testing";"os")
func BenchmarkPoll(b *testing.B) {
	t := NewListens(os.Getpid())
	t.Poll()
	for i := 0; i < b.N; i++ { t.Poll() }
}
