solid seed
facet normal 4294967295 0 1
outer loop
vertex -2.04875 1.40794 4.88514
vertex -2.0175 1.49387 4.87733
vertex -2.1425 1.49387 4.93202
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.93938 1.40794 4.88514
vertex -2.84563 1.49387 4.93202
vertex -2.97063 1.49387 4.87733
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.04875 1.40794 4.88514
vertex -2.1425 1.49387 4.93202
vertex -2.1425 1.36887 4.90858
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.93938 1.40794 4.88514
vertex -2.84563 1.36887 4.90858
vertex -2.84563 1.49387 4.93202
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.22844 1.40794 4.9242
vertex -2.1425 1.36887 4.90858
vertex -2.1425 1.49387 4.93202
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.75969 1.40794 4.9242
vertex -2.84563 1.49387 4.93202
vertex -2.84563 1.36887 4.90858
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.2675 1.49387 4.9242
vertex -2.22844 1.40794 4.9242
vertex -2.1425 1.49387 4.93202
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.72063 1.49387 4.9242
vertex -2.84563 1.49387 4.93202
vertex -2.75969 1.40794 4.9242
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.22844 1.58762 4.9242
vertex -2.2675 1.49387 4.9242
vertex -2.1425 1.49387 4.93202
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.75969 1.58762 4.9242
vertex -2.84563 1.49387 4.93202
vertex -2.72063 1.49387 4.9242
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.1425 1.62669 4.90858
vertex -2.22844 1.58762 4.9242
vertex -2.1425 1.49387 4.93202
endloop
endfacet
facet normal 0 0 1
outer loop
vertex -2.84563 1.62669 4.90858
vertex -2.84563 1.49387 4.93202
vertex -2.75969 1.58762 4.9242
endloop
endfacet
endsolid seed
