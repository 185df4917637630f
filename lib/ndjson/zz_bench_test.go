package ndjson
import ("testing";"os";"bytes")
func BenchmarkCheckCorpus(b *testing.B){
 data,_:=os.ReadFile("/tmp/agentry-bench/corpus-1000000.ndjson"); b.SetBytes(int64(len(data))); b.ResetTimer()
 for i:=0;i<b.N;i++{
  rest:=data; bad:=0
  for len(rest)>0 { j:=bytes.IndexByte(rest,'\n'); line:=rest[:j]; rest=rest[j+1:]; if Check(line)!=Valid{bad++} }
  if bad!=0 {b.Fatal(bad)}
 }
}
func BenchmarkSWAROnly(b *testing.B){
 data,_:=os.ReadFile("/tmp/agentry-bench/corpus-1000000.ndjson"); b.SetBytes(int64(len(data))); b.ResetTimer()
 for k:=0;k<b.N;k++{
  cnt:=0
  for i:=0; i+8<=len(data); i+=8 { if special(leU64(data[i:]))!=0 {cnt++} }
  if cnt==0 {b.Fatal()}
 }
}
func BenchmarkSpecialsCount(b *testing.B){
 data,_:=os.ReadFile("/tmp/agentry-bench/corpus-1000000.ndjson")
 cnt:=0
 for i:=0; i<len(data); i++ { c:=data[i]; if c=='"'||c=='\\'||c<0x20||c>=0x80 {cnt++} }
 b.ReportMetric(float64(len(data))/float64(cnt),"bytes/special")
}
