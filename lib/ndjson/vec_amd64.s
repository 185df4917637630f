#include "textflag.h"

// The UTF-8 check of Keiser and Lemire ("Validating UTF-8 in less than one
// instruction per byte", 2021): three nibble lookups classify every pair of
// adjacent bytes, and two saturating subtractions say where a third or
// fourth byte of a sequence must be a continuation. Any bit left set in the
// accumulated error is invalid UTF-8.

// Error bits.
// 0x01 too short   0x02 too long      0x04 overlong 3   0x08 too large
// 0x10 surrogate   0x20 overlong 2    0x40 too large 1000 / overlong 4
// 0x80 two continuations

// byte 1, high nibble
DATA b1hi<>+0(SB)/8, $0x0202020202020202
DATA b1hi<>+8(SB)/8, $0x4915012180808080
GLOBL b1hi<>(SB), RODATA|NOPTR, $16

// byte 1, low nibble
DATA b1lo<>+0(SB)/8, $0xcbcbcb8b8383a3e7
DATA b1lo<>+8(SB)/8, $0xcbcbdbcbcbcbcbcb
GLOBL b1lo<>(SB), RODATA|NOPTR, $16

// byte 2, high nibble
DATA b2hi<>+0(SB)/8, $0x0101010101010101
DATA b2hi<>+8(SB)/8, $0x01010101babaaee6
GLOBL b2hi<>(SB), RODATA|NOPTR, $16

// SPLAT32 defines name as 32 bytes, each of them the byte in the 8-byte
// pattern v.
#define SPLAT32(name, v) \
	DATA name+0(SB)/8, v; \
	DATA name+8(SB)/8, v; \
	DATA name+16(SB)/8, v; \
	DATA name+24(SB)/8, v; \
	GLOBL name(SB), RODATA|NOPTR, $32

SPLAT32(c80<>, $0x8080808080808080)

// BCAST sets every byte of Y to v.
#define BCAST(v, X, Y) \
	MOVL $v, AX; \
	VMOVD AX, X; \
	VPBROADCASTB X, Y

// BLOCK checks the 32 bytes in Y0 against the 32 before them in Y15,
// ORs what is wrong into Y14, and leaves Y0 in Y15.
#define BLOCK \
	VPERM2I128 $0x21, Y0, Y15, Y1; \
	VPALIGNR   $15, Y1, Y0, Y2; \
	VPALIGNR   $14, Y1, Y0, Y3; \
	VPALIGNR   $13, Y1, Y0, Y4; \
	VPSRLW     $4, Y2, Y5; \
	VPAND      Y10, Y5, Y5; \
	VPSHUFB    Y5, Y13, Y5; \
	VPAND      Y10, Y2, Y6; \
	VPSHUFB    Y6, Y12, Y6; \
	VPSRLW     $4, Y0, Y8; \
	VPAND      Y10, Y8, Y8; \
	VPSHUFB    Y8, Y11, Y8; \
	VPAND      Y6, Y5, Y5; \
	VPAND      Y8, Y5, Y5; \
	VPSUBUSB   Y9, Y3, Y3; \
	VPSUBUSB   Y7, Y4, Y4; \
	VPOR       Y4, Y3, Y3; \
	VPAND      c80<>(SB), Y3, Y3; \
	VPXOR      Y5, Y3, Y3; \
	VPOR       Y3, Y14, Y14; \
	VMOVDQA    Y0, Y15

// TABLES loads BLOCK's lookup tables and constants, and clears its
// carried block (Y15) and accumulated error (Y14).
#define TABLES \
	VBROADCASTI128 b1hi<>(SB), Y13; \
	VBROADCASTI128 b1lo<>(SB), Y12; \
	VBROADCASTI128 b2hi<>(SB), Y11; \
	BCAST(0x0f, X10, Y10); \
	BCAST(0x60, X9, Y9); \
	BCAST(0x70, X7, Y7); \
	VPXOR Y15, Y15, Y15; \
	VPXOR Y14, Y14, Y14

// func validUTF8AVX2(b []byte, tail *[32]byte) bool
TEXT ·validUTF8AVX2(SB), NOSPLIT, $0-33
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ tail+24(FP), DX
	TABLES

loop:
	CMPQ CX, $32
	JB   last
	VMOVDQU (SI), Y0
	BLOCK
	ADDQ $32, SI
	SUBQ $32, CX
	JMP  loop

last:
	VMOVDQU (DX), Y0
	BLOCK
	VPTEST Y14, Y14
	SETEQ  ret+32(FP)
	VZEROUPPER
	RET

// Broadcast constants for MARK, read from memory: BLOCK leaves no register free.
SPLAT32(cquote<>, $0x2222222222222222)

SPLAT32(cbslash<>, $0x5c5c5c5c5c5c5c5c)

SPLAT32(cctl<>, $0x1f1f1f1f1f1f1f1f)

// MARK stores at (DI), and steps DI past, a 32-bit mask of the bytes in Y0
// that are '"', '\\' or a control byte.
#define MARK \
	VPCMPEQB  cquote<>(SB), Y0, Y1; \
	VPCMPEQB  cbslash<>(SB), Y0, Y2; \
	VPMINUB   cctl<>(SB), Y0, Y3; \
	VPCMPEQB  Y3, Y0, Y3; \
	VPOR      Y2, Y1, Y1; \
	VPOR      Y3, Y1, Y1; \
	VPMOVMSKB Y1, AX; \
	MOVL      AX, (DI); \
	ADDQ      $4, DI

// func markAVX2(b []byte, tail *[32]byte, stops *uint32) bool
//
// validUTF8AVX2 that also stores, for each 32 bytes of b and then for tail,
// the mask of bytes where a string scan must stop: len(b)/32+1 words.
TEXT ·markAVX2(SB), NOSPLIT, $0-41
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ tail+24(FP), DX
	MOVQ stops+32(FP), DI
	TABLES

mloop:
	CMPQ CX, $32
	JB   mlast
	VMOVDQU (SI), Y0
	BLOCK
	MARK
	ADDQ $32, SI
	SUBQ $32, CX
	JMP  mloop

mlast:
	VMOVDQU (DX), Y0
	BLOCK
	MARK
	VPTEST Y14, Y14
	SETEQ  ret+40(FP)
	VZEROUPPER
	RET

// Bytes that may follow a backslash as a two-byte escape.
DATA escok<>+0(SB)/8, $0x0000000000000000
DATA escok<>+8(SB)/8, $0x0000000000000000
DATA escok<>+16(SB)/8, $0x0000000000000000
DATA escok<>+24(SB)/8, $0x0000000000000000
DATA escok<>+32(SB)/8, $0x0000000000010000
DATA escok<>+40(SB)/8, $0x0100000000000000
DATA escok<>+48(SB)/8, $0x0000000000000000
DATA escok<>+56(SB)/8, $0x0000000000000000
DATA escok<>+64(SB)/8, $0x0000000000000000
DATA escok<>+72(SB)/8, $0x0000000000000000
DATA escok<>+80(SB)/8, $0x0000000000000000
DATA escok<>+88(SB)/8, $0x0000000100000000
DATA escok<>+96(SB)/8, $0x0001000000010000
DATA escok<>+104(SB)/8, $0x0001000000000000
DATA escok<>+112(SB)/8, $0x0000000100010000
DATA escok<>+120(SB)/8, $0x0000000000000000
DATA escok<>+128(SB)/8, $0x0000000000000000
DATA escok<>+136(SB)/8, $0x0000000000000000
DATA escok<>+144(SB)/8, $0x0000000000000000
DATA escok<>+152(SB)/8, $0x0000000000000000
DATA escok<>+160(SB)/8, $0x0000000000000000
DATA escok<>+168(SB)/8, $0x0000000000000000
DATA escok<>+176(SB)/8, $0x0000000000000000
DATA escok<>+184(SB)/8, $0x0000000000000000
DATA escok<>+192(SB)/8, $0x0000000000000000
DATA escok<>+200(SB)/8, $0x0000000000000000
DATA escok<>+208(SB)/8, $0x0000000000000000
DATA escok<>+216(SB)/8, $0x0000000000000000
DATA escok<>+224(SB)/8, $0x0000000000000000
DATA escok<>+232(SB)/8, $0x0000000000000000
DATA escok<>+240(SB)/8, $0x0000000000000000
DATA escok<>+248(SB)/8, $0x0000000000000000
GLOBL escok<>(SB), RODATA|NOPTR, $256

// STOPS sets a bit in AX for each of the 32 bytes at addr that is '"',
// '\\' or a control byte.
#define STOPS(addr) \
	VMOVDQU   addr, Y0; \
	VPCMPEQB  Y1, Y0, Y4; \
	VPCMPEQB  Y2, Y0, Y5; \
	VPMINUB   Y3, Y0, Y6; \
	VPCMPEQB  Y6, Y0, Y6; \
	VPOR      Y5, Y4, Y4; \
	VPOR      Y6, Y4, Y4; \
	VPMOVMSKB Y4, AX

// func scanString(b []byte, i int) int
//
// Returns the index of the first byte at or after i that is '"', a control
// byte, or a backslash that does not start a two-byte escape (\u, a bad
// escape, or one cut off by the end), stepping over two-byte escapes; len(b)
// when there is none. len(b) must be at least 32: the last step loads the
// final 32 bytes and ignores the ones before i.
TEXT ·scanString(SB), NOSPLIT, $0-40
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ i+24(FP), DX
	LEAQ escok<>(SB), R8
	BCAST(0x22, X1, Y1) // '"'
	BCAST(0x5c, X2, Y2) // '\\'
	BCAST(0x1f, X3, Y3) // the highest control byte

next:
	MOVQ BX, CX
	SUBQ DX, CX // CX = bytes left
	JLE  none
	CMPQ CX, $32
	JB   end

	STOPS((SI)(DX*1))
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, DX
	JMP       next

end: // fewer than 32 left: look at the last 32, drop the CX-32 before i
	STOPS(-32(SI)(BX*1))
	NEGQ      CX
	ADDQ      $32, CX
	SHRL      CX, AX
	TESTL     AX, AX
	JZ        none

found:
	BSFL    AX, AX
	ADDQ    AX, DX // DX = index of the byte
	MOVBLZX (SI)(DX*1), AX
	CMPB    AX, $0x5c
	JNE     done
	LEAQ    1(DX), CX
	CMPQ    CX, BX
	JAE     done
	MOVBLZX (SI)(CX*1), AX
	MOVBLZX (R8)(AX*1), AX
	TESTL   AX, AX
	JZ      done
	ADDQ    $2, DX
	JMP     next

none:
	MOVQ BX, DX

done:
	VZEROUPPER
	MOVQ DX, ret+32(FP)
	RET
